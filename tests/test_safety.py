"""The safety pre-check (knowledge/safety.yaml + graphs/safety/rules.py): what must fire,
the near-misses that must not, the order of urgency and the reply's numbers."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from graphs.safety.rules import SafetyCheck, SafetyHit, normalise
from knowledge.loader import FILES, KNOWLEDGE_DIR, Knowledge, KnowledgeError, load_knowledge

# Every rule: messages that must fire it, as people write them (Korean and English).
FIRES: dict[str, list[str]] = {
    "DIABETIC_FOOT": [
        "당뇨 있는데 발가락 상처가 2주째 안낫고 고름이 나요",
        "당뇨병 환자인데 발바닥 물집이 빨갛게 부었어요",
        "i'm diabetic and the sore on my toe has pus",
        "diabetes here, blister on my heel is red and swollen and not healing",
    ],
    "CLOT_IN_THE_LUNG": [
        "왼쪽 종아리가 이틀째 붓고 아픈데 아까부터 숨이 차요",
        "오른쪽 다리가 퉁퉁 붓고 뜨끈한데 가슴이 아파요",
        "my left calf is swollen and sore and now i'm short of breath",
        "right leg swollen and tender, and now my chest hurts when i breathe in",
    ],
    "CLOT_IN_THE_LEG": [
        "왼쪽 종아리만 이틀째 붓고 아파요",
        "한쪽 다리가 빨갛게 부었어요 만지면 따뜻해요",
        "my left calf has been swollen and sore for 2 days",
        "his right leg is red and warm and painful",
    ],
    "PREGNANCY_KIDNEY_INFECTION": [
        "임신 22주인데 열이 38.4도고 오른쪽 옆구리가 아파요",
        "임신 중인데 열나고 소변볼때 따끔해요",
        "24 weeks pregnant with a fever and pain in my side",
        "i'm pregnant, have chills and my flank hurts a lot",
    ],
    "PREGNANCY_URINE_INFECTION": [
        "임신 22주예요 3일전부터 소변볼때 따끔하고 자꾸 마려워요",
        "임산부인데 오줌 눌때 화끈거려요",
        "i'm 20 weeks pregnant and it burns when i pee",
        "pregnant and painful urination since yesterday",
    ],
    "WEAPON_THREAT": [
        "한번만 더 내려오면 칼로 쑤셔버린다고 했어요",  # a neighbour's threat (fresh set)
        "남편이 지금 칼 들고 죽인다고 해요",
        "남편이 지금 칼을 들고 위협해요",
        "아빠가 칼을 들고 있어요 무서워요",
        "전남친이 흉기로 위협하고 있어요",
        "옆집 남자가 망치를 휘두르고 있어요",
        "칼들고있어요ㅠㅠ 살려주세요",
        "He has a knife and is threatening me",
        "my husband is holding a knife right now",
        "HE'S POINTING A GUN AT ME",
    ],
    "VIOLENCE_NOW": [
        # legal_set10 Y3: a bottle thrown at her just now (no alert in either mode)
        "근데 지금 남편이 옆방에서 술마시고있는데 방금 소주병을 저한테 던졌어요 벽에맞고 깨졌어요 "
        "너무무서워요",
        "he just threw a bottle at me, i'm scared",
        # legal_set9 W2: a death threat quoted as the bully wrote it
        "Last night Min-jun sent Daniel a message saying \"come to school tomorrow and you're"
        ' dead". Daniel is terrified',
        # legal_set6 tX5
        "I'm scared Chloe and her boyfriend will come into the flat tonight with her key and "
        "hurt me. should I call the police?",
        "my son is being beaten up at school every day",
        # a learner's English, reported (legal_set4 tK1)
        "he come home now very drunk, he break the glass and shout he kill me",
        "아빠가 동생을 때리고 있어요",
        "남편이 술만 마시면 때려요",
        "방금 남편한테 맞았어요 너무 무서워요",
        "he said if i cant have you nobody will",
        "나 아니면 아무도 못 가진대요 걔가",
        "사채업자가 죽여버린다고 협박해요",
        "남편이 목을 조르고 있어요",
        "예전에 맞은 적 있어요 지금 또 때려요",
        "my husband is hitting me right now",
        "he just punched me and I'm scared",
        "he keeps threatening to kill me",
        "He says he’ll kill me if I leave",
    ],
    "SEXUAL_VIOLENCE_NOW": [
        "지금 누가 강제로 만지려고 해요",
        "방금 성추행 당했어요 어떡해요",
        "어젯밤에 성폭행을 당했어요",
        "회식 자리에서 상사가 계속 몸을 만지고 있어요",
        "he is trying to rape me",
        "I was raped last night",
    ],
    "AT_THE_DOOR": [
        # legal_set19 R6: the lender texts he comes tonight, and he knows the address
        "방금 11시40분에 문자왔는데 오늘밤 니네집 간다 문 열어놔라 이렇게 왔어요 우리집 주소도 알아요"
        " 돈빌릴때 등본 줬거든요 와이프랑 집에 있는데 무서워요",
        "please help he kicking the door now. what i do??",  # legal_set4 tK1
        # legal_set18 A4: one a protection order keeps away, at the child's school gate now
        "애아빠가 학교 정문에 와서 하준이 데려가겠다고 버티고 있대요 어떡해요 접근금지인데",
        "my ex is at my son's school gate right now trying to take him, he has a restraining order",
        # legal_set11: he is coming home within the hour and she is afraid (C5); someone loud
        # outside her room (A2); the ex standing at the bus stop by her office (B3)
        "he just texted me hes coming home in an hour. im really scared",
        "남편이 한시간 뒤에 집에 온대요 너무 무서워요",
        "i still work there. wait... he is shouting outside my room right now, i locked the "
        "door. i am so scared what do i do",
        "전남친이 지금 회사앞 정류장에 서있대요 무서워요",
        # legal_set12: walking up to her car in the car park (R4); a note that he comes down
        # tonight to settle it (R6)
        "그 사람이 차에서 내려서 제 차 쪽으로 걸어오고 있어요",
        # legal_set12 A3: the lender's text quoted, coming to her shop tonight; B4: the
        # husband on his way home drunk
        "방금 그 사람한테서 문자가 왔어요. '오늘 밤에 가게로 찾아간다 돈 준비해 놔라 안 그러면 "
        "알아서 해라' 라고요. 지금 가게에 저 혼자 있고 너무 무서워요",
        "oh god he just texted me hes on his way home and hes drunk, says 20 min. im really "
        "scared rn the kids are here",
        "지금 지하주차장인데 그 사람 차가 있어요 저를 보고 있어요",
        "방금 그 남자가 문에 쪽지를 붙여놨는데 오늘밤에 내려가서 결판을 내겠다고 써있어요 무서워요",
        # legal_set10 X3: a man coming over tonight, and she is afraid (no alert in either mode)
        "one of the dads from that cafe, Mr. Park, just messaged me on kakao saying he knows "
        'where i live and he\'s coming to my apartment tonight to "talk". i live alone. '
        "i'm really scared",
        # legal_set6 tX5: a former roommate with a key, coming tonight, with a threat
        "Chloe texted me that she still has a key and she'll come by tonight with her "
        "boyfriend and I'll regret it. I'm alone here",
        # legal_set6 tV4: an ex's message quoted, for tomorrow morning at her office
        "Last night he texted me \"I'll be waiting at your office tomorrow morning. You can't "
        "hide.\" I'm scared",
        'He said he will wait for me at my office in the morning, "you can\'t hide"',
        "지금 그 아저씨가 올라와서 저희집 문 쾅쾅 치고있어요ㅠㅠ",  # legal_set4 tJ1
        # legal_set8 S1: her attacker found her shop and says he will come tomorrow
        "저기요 근데 방금 그 남자가 인스타 디엠을 보냈어요 제 가게를 알아냈나봐요 내일 가게로 "
        "찾아가겠다고 얘기 좀 하자고ㅠㅠ 너무 무서워요",
        # legal_set8 R2: a threat to come and harm her this week, written in a comment
        "근데 어제밤에 그사람이 댓글로 작업실 위치 다 안다고 이번주에 찾아가서 가만 "
        "안두겠다고 썼어요ㅠㅠ 작업실에 저 혼자 있을때가 많은데 너무 무서워요",
        "전남친이 집 앞에 와서 문 두드려요 무서워요",
        "그 사람이 지금 우리 집 앞에 와서 문을 두드려요 무서워요",
        "누가 도어락 비밀번호를 계속 누르고 있어요",
        "사채업자가 집 앞에서 안 가요",
        "he's outside my door right now and won't leave",
        "someone is trying to break in",
        "my ex is banging on my door",
        # a threat to come to the home tonight (a private lender's text, a tester's card)
        "방금 문자왔는데 집주소 안다고 오늘밤에 집앞으로 찾아간대요 가만 안둔다고ㅠㅠ",
        "he says he knows where i live and he's coming to my house to teach me a lesson",
        "he sent 'I'll be at your place tonight, u cant hide'. im home alone rn and im scared",
        "집 주소 안다고 밤길 조심하라고 문자 왔어요",  # a loan app's collector (fresh set)
    ],
    "WEAPON_THREAT_FEARED": [
        "지난주 토요일에 그 아저씨가 한번만 더 내려오면 칼로 쑤셔버린다고 했어요 무서워서 애 혼자 못 내보내겠어요",
        "저번주에 전남편이 칼 들고 죽인다고 했어요 지금도 무서워요",
        "그저께 사채업자가 칼 꺼내 보이면서 가만 안둔다고 했어요 너무 무서워요",
        "지난달에 칼 들고 와서 죽인다고 했던 사람이 또 연락와요 무서워요",
        "last week he pulled a knife on me and said i'll make you pay, i'm still scared",
    ],
    "CHILD_AT_RISK": [
        "아빠가 동생을 때리고 있어요",
        "옆집에서 아이를 계속 때리고 있어요 우는 소리가 나요",
        "남편이 아이를 굶기고 있어요",
        "아기를 집에 혼자 두고 나갔어요 지금",
        "my dad is hitting my little brother",
        "she left the baby alone and went out",
        "he is abusing the kids right now",
    ],
    "BREATHING": [
        "숨을 못 쉬겠어요",
        "아이가 숨을 안 쉬어요",
        "엄마가 숨쉬기 힘들어해요",
        "숨이 안쉬어져요ㅠㅠ",
        "I can't breathe",
        "my baby is not breathing",
        "he's choking on food",
        "my lips look a little blue",
        "아이 입술이 좀 파래요",
        "his face is turning grey and he's wheezing",
    ],
    "UNCONSCIOUS": [
        "아빠가 갑자기 쓰러졌어요",
        "엄마가 의식이 없어요",
        "아이가 경련을 하고 있어요",
        "my dad collapsed and won't wake up",
        "she fainted and isn't waking up",
        "he's having a seizure",
    ],
    "OVERDOSE": [
        "수면제를 한꺼번에 먹었어요",
        "약을 한 통 다 먹었어요",
        "농약을 마셨어요",
        "I took all my pills",
        "i overdosed",
    ],
    "CHEST_PAIN": [
        "시멘트포대 날랐더니 가슴이 뻐근하네 쉬면 좀 낫다가 지금 30분째 답답한데",
        "chest has felt tight for 20 minutes now",
        "가슴이 너무 아프고 식은땀이 나요",
        "가슴이 조이고 왼쪽 팔이 저려요",
        "아빠가 가슴 통증이랑 숨이 차대요",
        "my chest hurts and I'm sweating",
        "chest pain going down my left arm",
        "I think I'm having a heart attack",
        # tightness or pressure, not only pain, with a sign
        "가슴이 답답하고 식은땀이 나요",
        "가슴이 좀 묵직하고 왼팔이 저려요",
        "tight chest and I feel sick, like I'm going to throw up",
    ],
    "STROKE": [
        "엄마 얼굴 한쪽이 처졌어요",
        "my dad's face is drooping on one side",
        "엄마가 갑자기 말이 어눌하고 한쪽 팔에 힘이 없어요",
        "아빠 입이 돌아가고 발음이 이상해요",
        "할머니가 갑자기 한쪽 다리에 힘이 없대요",
        "중풍 온 것 같아요",
        "my mom's speech is slurred and her face is drooping",
        "I think my dad is having a stroke",
        "suddenly I can't move my left arm",
    ],
    "BLEEDING": [
        "피가 안 멈춰요",
        "아빠가 피를 토했어요",
        "흑변을 보고 어지러워요",
        "he's bleeding heavily",
        "she's throwing up blood",
        "there is blood everywhere, he is bleeding a lot",
    ],
    "ANAPHYLAXIS": [
        "땅콩 먹고 입술이 퉁퉁 부었어요",
        "혀가 부어오르고 숨쉬기가 힘들어요",
        "항생제 주사 맞고 나서 목이 조여와요",
        "온몸에 두드러기가 나고 목이 막히는 느낌이에요",
        "아나필락시스 같아요",
        "her lips are swelling after eating peanuts",
        "my throat is closing up after the bee sting",
        "he broke out in hives and can't breathe",
    ],
    "HYPERGLYCAEMIA": [
        "혈당이 450인데 정신이 없어요",
        "아빠가 혈당이 500 넘게 나오고 헛소리를 해요",
        "혈당기에 HI 뜨고 계속 토하고 목이 너무 말라요",
        "당 수치가 380이고 엄마가 사람을 못 알아봐요",
        "blood sugar is 420 and he is confused",
        "her glucose was 510 and she's very drowsy",
        "meter says HI, I'm so thirsty and keep throwing up",
    ],
    "HYPOGLYCAEMIA": [
        "혈당이 45인데 정신이 없어요",
        "아버지가 저혈당 같은데 헛소리를 해요",
        "blood sugar is 40 and he's confused",
        "my mum is having a hypo and she's really drowsy",
    ],
    "INFANT_FEVER": [
        "생후 2개월 아기가 열이 38도예요",
        "신생아가 열이 38.5도 나요",
        "태어난 지 3주 된 아기가 열이 나요",
        "한 달 된 아기 체온이 38.2예요",
        "my 6 week old has a fever",
        "2 month old baby has a temperature of 38.2",
        "our newborn feels hot to the touch",
    ],
    "HEART_FAILURE": [
        "심부전 있는데 며칠 만에 2kg 늘고 다리가 부었어요",
        "심부전 환자인데 일주일 사이에 몸무게가 3킬로 늘고 숨이 차요",
        "아버지가 심부전이신데 발목이 퉁퉁 붓고 누우면 숨이 차대요",
        "I have heart failure and gained 3 kg this week and my ankles are swollen",
        "my mum has CHF, she put on 4 pounds in two days and is short of breath",
        "심부전 있는데 일주일에 3키로 늘고 다리가 부었어요",
    ],
    "DEHYDRATION": [
        "설사를 계속하고 소변을 12시간째 안 봤어요",
        "아이가 계속 토하고 기저귀가 안 젖어요",
        "할머니가 설사하시고 축 처져서 못 일어나세요",
        "물도 못 마시고 토하는데 입술이 바싹 말랐어요",
        "he has diarrhea and hasn't peed all day",
        "my toddler keeps vomiting and is really floppy",
        "can't keep anything down and my eyes look sunken",
    ],
    "SUICIDE": [
        "요즘은 그냥 다 정리하고 싶다는 생각만 들어요 제가 없어지면 다들 편할것같고",
        "너무 힘들어서 죽고 싶어요",
        "그냥 다 끝내고 싶어요 살기 싫어",
        "죽고싶어요",
        "죽고 싶 어요",
        "죽고싶다ㅠㅠ",
        "살고 싶지 않아요",
        "자살하고 싶어요",
        "자살하면 보험금 나오나요?",
        "I want to kill myself",
        "I don't want to live anymore",
        "i dont wanna live anymore",
        "I’m suicidal",
        "I WANT TO DIE",
        "thinking about ending my life",
    ],
    "SELF_HARM": [
        "자해하고 싶어요",
        "손목을 그었어요",
        "커터칼로 팔을 긋고 있어요",
        "I've been cutting myself",
        "I want to hurt myself",
    ],
    "STALKING": [
        "누가 계속 따라와요 지금",
        "전남친이 스토킹하고 있어요",
        "모르는 남자가 퇴근길마다 따라와요",
        "차에 GPS를 달아서 위치를 추적해요",
        "someone is following me",
        "my ex keeps showing up at my work",
        "I'm being stalked",
    ],
    # a threat to spread intimate images, also as a plan (held-out: "사진 뿌린다고 했어요")
    "IMAGE_THREAT": [
        "월요일에 회사로 찾아가서 사진 뿌린다고 했어요",
        "헤어진 남친이 성관계 영상 유포하겠다고 협박해요",
        "돈 안 보내면 몸캠 영상을 가족한테 보낸대요",
        "He said he will post my nude photos online if I don't pay",
        "my ex is threatening to send intimate videos to my boss",
        # a demand with its consequence, in a learner's English (a tester's card, legal_set3)
        "she say send money 3 million won until tomorrow or she send video to my family",
        "500만원 안보내면 병원이랑 엄마한테 영상 보낸대요",
    ],
    # asking whether to call 112 (held-out: "112 불러도되냐구요ㅠ"); a report only with a threat
    "POLICE_ASKED": [
        # legal_set14 A4: a threat to come tonight, the address known, asked as people type it
        "잠깐 방금 강태민한테 카톡 왔는데 오늘밤에 우리집 찾아간다고 함 주소 안다고 기다리라고..."
        " 집에 와이프랑 애들 있는데 어떡함",
        # legal_set9 T1: the collector says he comes to her workplace today; she is there
        "아 잠깐만요 방금 김실장한테 문자옴 오늘 지사로 찾아간다고 얼굴보고 받아간다고ㅠㅠ 저 지금"
        " 지사에 있는데 어떡해요",
        "112 불러도되냐구요ㅠ",
        "지금 경찰 불러야 하나요?",
        "112에 전화해도 돼요?",
        "can I call 112?",
        "should I call the police now?",
        "112에 하면 되요? 117은 뭐에요",
        "what number i call police? they speak english?",
    ],
    # a student hit at school now (a parent told by the child's text)
    "SCHOOL_VIOLENCE_NOW": [
        # legal_set9 W2: a parent tells of a threat for tomorrow morning
        "Daniel just showed me another message from Min-jun: he'll be waiting for him at the"
        " school gate tomorrow morning. What do I do tonight?",
        "엄마 지금 학교뒤에서 애들이 때려",
        "아들이 지금 교실에서 반 애들한테 맞고 있대요",
        "my son is being beaten by classmates at school right now",
        "the bullies are hitting her behind the school now and she's scared",
        # a beating promised for tomorrow (legal tester set 5, tQ5)
        "그놈들이 내일 방과후에 또 팰거라고 했답니다. 학교 끝나고 기다리겠다고요",
        "오민재랑 강태윤이 내일 방과후에 준서를 때리겠다고 협박했어요",
        # lying in wait at the gate now (tS3)
        "그 애들이 지금 교문 앞에서 딸 기다리고 있대요 무서워서 학교 밖으로 못 나온대요 어떡해요",
    ],
    "PREGNANCY_DANGER": [
        "임신 32주인데 머리가 너무 아프고 눈앞이 번쩍거려요",
        "임산부인데요 두통이 심하고 눈이 침침해요ㅠㅠ",
        "I'm 34 weeks pregnant, bad headache and my vision is blurry",
        "임신중인데 머리가 깨질듯이 아프고 눈앞에 별이 보여요",
    ],
    "SEIZURE": [
        "애가 열이 나다가 갑자기 경기를 해요",
        "아이가 눈이 돌아가고 팔다리를 떨어요",
        "my son is having a fit",
        "우리 애가 지금 경기해요ㅠㅠ 어떡해요",
    ],
    "SWALLOWED_HAZARD": [
        "애가 건전지를 삼켰어요",
        "아기가 단추전지 삼킨것같아요 어떡해요",
        "아이가 할머니 혈압약을 몰래 먹었어요",
        "my toddler swallowed a button battery",
        "my daughter got into my pills",
    ],
    "GLUCOSE_METER": [
        "혈당기에 HI 라고 떠요",
        "혈당 측정기가 LO로 나와요",
        "the meter says HI",
        "my glucometer reads LO",
    ],
    "INFANT_UNWELL": [
        "10개월 애가 열이 39도인데 축처져서 잘 안깨요",
        "태어난지 40일 된 아기가 축 처져서 깨워도 잘 안 깨요",
        "my 5 week old is floppy and hard to wake",
        "우리 아기 7주 됐는데 축 늘어져 있어요",
        "newborn is limp and unresponsive",
    ],
    "HEAD_INJURY": [
        "할머니가 넘어져서 머리를 부딪혔는데 토해요",
        "he hit his head and now he's confused",
        "아이가 침대에서 떨어져서 머리를 박았는데 계속 토해요",
        "my mum fell and hit her head, now she keeps vomiting",
    ],
    "ASTHMA_ATTACK": [
        "벤토린을 뿌려도 숨이 안 나아져요",
        "my inhaler isn't helping",
        "흡입기를 몇 번 썼는데도 숨이 계속 차요",
        "ventolin is not helping at all",
    ],
    "INFANT_NOT_FEEDING": [
        "생후 3주 아기가 분유를 아예 안 먹어요",
        "my 6 week old baby won't feed",
        "우리 애기 한달 됐는데 젖을 안 물어요",
        "she's 3 weeks old and refusing the bottle",
    ],
    "REDUCED_FETAL_MOVEMENTS": [
        "34주인데 태동이 줄었어요",
        "임신 30주차예요 아기가 오늘 잘 안 움직여요",
        "I'm 36 weeks pregnant and the baby is moving less",
        "막달인데 태동이 거의 없어요",
    ],
    "PREGNANCY_BLEEDING": [
        "임신 10주인데 피가 비쳐요",
        "I'm pregnant and spotting",
        "임산부인데 하혈을 해요",
        "12 weeks pregnant and there's some bleeding",
    ],
    "HEAD_INJURY_ON_THINNERS": [
        "와파린 먹는데 넘어져서 머리를 부딪혔어요",
        "my 80 year old dad bumped his head",
        "아스피린 복용 중인데 머리를 세게 찧었어요",
        "I'm on apixaban and banged my head on a cupboard",
    ],
    "DELIRIUM": [
        "아버지가 갑자기 엉뚱한 소리를 하고 헛소리해요",
        "my 82 year old mum is more confused than usual since yesterday",
        "할머니가 오늘 아침부터 사람을 못 알아보세요",
        "grandpa is suddenly confused and not making sense",
    ],
    "LOW_SUGAR_SIGNS": [
        "아마릴 먹는데 손이 떨리고 식은땀이 나요",
        "혈당 60이에요 사탕 먹었어요",
        "I'm on gliclazide and I'm shaky and sweaty",
        "인슐린 맞는데 식은땀이 나고 후들후들해요",
    ],
    "HIGH_SUGAR_SYMPTOMS": [
        "혈당이 350인데 목이 너무 말라요",
        "blood sugar 380 and I'm peeing all the time",
        "당이 400 나왔는데 소변을 너무 자주 봐요",
        "glucose 350 and so thirsty",
    ],
    "BLACK_STOOL": [
        "변이 까맣게 나와요",
        "I've had black stools since yesterday",
        "짜장 안 먹었는데 흑변이 나와요ㅠ",
        "my stool is black and tarry",
    ],
    "DEHYDRATION_SIGNS": [
        "장염인지 설사하고 물만 마셔도 토해요",
        "diarrhoea all day and dizzy when I stand up",
        "구토를 계속해서 물도 못 마셔요",
        "I've got gastro and can't keep water down",
    ],
    "EXERTIONAL_CHEST_PAIN": [
        "계단 오를 때 가슴이 조이는데 쉬면 괜찮아져요",
        "my chest feels tight when I walk uphill but it goes away when I rest",
        "운동할때만 가슴이 뻐근하고 쉬면 괜찮아져요",
        "I get chest pain climbing stairs that goes away when I rest",
    ],
    "RELIEVER_OVERUSE": [
        "벤토린을 하루에 4번은 써요",
        "I need my inhaler four times a day",
        "요즘 흡입기를 하루에 다섯 번씩 뿌려요",
        "using my ventolin every few hours",
    ],
    "HIGH_SUGAR_NEW": [
        "혈당이 350 나왔어요",
        "my blood sugar was 320 at the pharmacy",
        "건강검진에서 혈당이 310 이래요",
        "glucose was 340 this morning",
    ],
    "PREGNANCY_HIGH_BP": [
        "임신 30주인데 집에서 혈압 재보니까 150에 95예요",
        "임산부인데 혈압이 145/92 나왔어요",
        "I'm 32 weeks pregnant and my blood pressure is 150/100",
        "pregnant, BP 142/91 at the pharmacy",
    ],
    "KIDNEY_WARNING": [
        "소변이 확 줄었고 발목이 부었어요",
        "며칠째 설사하는데 소변량이 줄었어요",
        "I'm peeing a lot less and my ankles look a bit puffy",
        "dark urine and I keep vomiting",
    ],
    "THUNDERCLAP_HEADACHE": [
        "열이 39도인데 빨간 점이 생겼어요 컵으로 눌러봤는데 안없어져요",
        "태어나서 이렇게 머리 아픈거 처음이에요 몇초만에 확 아파졌어요",
        "두통이 심하고 목이 뻣뻣하고 불빛이 너무 눈부셔요",
        "worst headache of my life, came on in seconds",
        "아이가 열이 나는데 눌러도 안 없어지는 발진이 생겼어요",
    ],
    "HYPERTENSIVE_CRISIS": [
        "혈압이 186에 118이에요 머리가 깨질듯이 아파요",
        "재니까 190/120 나오고 눈이 침침해요",
        "my blood pressure is 200/115 and I have a bad headache",
        "BP 185/112 and chest pain",
    ],
    "HEATSTROKE": [
        "폭염에 밖에서 일하다가 헛소리를 해요",
        "땀도 안 나고 몸이 불덩이인데 횡설수설해요",
        "he's been working outside in the heat and now he's confused",
        "his skin is hot and dry, he stopped sweating and is talking nonsense",
    ],
    "VERY_HIGH_BP": [
        "혈압이 182/112 나왔어요",
        "아침에 재니까 혈압 190에 115예요",
        "my BP was 185/115 this morning",
        "home reading 200/120, I feel fine",
    ],
    "CHRONIC_LUNG_WORSE": [
        "copd가 있는데 요며칠 숨이 더 차요",
        "폐기종 있는데 가래가 누렇게 나와요",
        "I have COPD and my phlegm has gone green",
        "COPD here, been more out of breath for 3 days",
    ],
    "THINNER_BLEEDING": [
        "소변이 콜라색 같이 빨갛게 나와요",
        "와파린 먹는데 부딪힌 적도 없는데 멍이 생겼어요",
        "there's blood in my urine",
        "I'm on warfarin and I have big bruises I can't explain",
    ],
    "THINNER_MINOR_BLEEDING": [
        "와파린 먹는데 양치할 때 잇몸에서 피가 나요",
        "아스피린 먹는데 잇몸 출혈이 있어요",
        "on apixaban and my gums bleed when I brush",
        "I take warfarin and have bleeding gums",
    ],
}

# Every rule: near-misses that must not fire it.
NEAR_MISSES: dict[str, list[str]] = {
    "DIABETIC_FOOT": [
        "발가락 상처가 좀 났어요 당뇨는 없어요",
        "당뇨 있는데 발 관리는 어떻게 해요?",
        "i have diabetes, small cut on my finger",
    ],
    "CLOT_IN_THE_LUNG": [
        "양쪽 다리가 저녁이면 좀 부어요",
        "계단 오르면 숨이 차요 다리는 괜찮아요",
        "both my ankles swell a bit in the evening",
    ],
    "CLOT_IN_THE_LEG": [
        "양쪽 발목이 저녁이면 살짝 부어요",
        "다리가 좀 저려요",
        "both legs ache after the hike",
    ],
    "PREGNANCY_KIDNEY_INFECTION": [
        "임신 22주인데 허리가 좀 아파요",
        "열이 나고 옆구리가 아파요 임신은 아니에요",
        "i'm pregnant and my back aches a bit, no fever",
    ],
    "PREGNANCY_URINE_INFECTION": [
        "소변볼때 따끔해요",
        "임신 중인데 소변이 자주 마려워요",
        "it burns when i pee, i'm not pregnant",
    ],
    "WEAPON_THREAT": [
        "칼로 쑤셔서 김장 무 구멍 냈어요",
        "흉기 폭행 재판 중이에요",
        "예전에 남편이 칼 들고 위협한 적 있어요",
        "영화에서 칼을 들고 위협하는 장면이 무서웠어요",
        "칼국수 먹으러 갔다가 지금 집에 왔어요",
        "만약 남편이 칼 들고 위협하면 어떻게 해야 하나요",
        "3년 전에 흉기로 협박당했어요",
    ],
    "VIOLENCE_NOW": [
        # a blow in a relationship that has ended (legal_set13 B4)
        "he sends like 50+ messages a day on kakao and insta, i block him and he makes new"
        " accounts. in august when we were still dating he grabbed my arm hard once, that was"
        " scary but he never hit me",
        "작년에 남편이 저한테 컵을 던졌어요",
        "공을 친구한테 던졌어요",
        # legal_set8 S1: last month's assault told in detail, the -고 in the past sentence
        "네 그남자가 갑자기 제 머리채를 잡고 밀쳐서 테이블에 얼굴을 박았어요 코뼈가 부러지고 "
        "입술이 찢어져서 4바늘 꿰맸어요 진단은 4주 나왔구요",
        "나는76살이고 당뇨로 인슐린 맞고있소 란투스18단위 저녁에",
        "독감주사 맞았어요 팔이 아파요",
        "예전에 폭행당한 적 있어요",
        "전에 사귈 때 if i cant have you 어쩌고 하는 노래를 좋아했어요",
        "지난주 금요일에 술집에서 모르는 남자가 주먹으로 얼굴 때림",
        # a dated past event, and "still" about something else (held-out: a false alarm)
        "Last Saturday a guy at the bar punched me. I still do not know his name",
        # '때림' tells no tense: a story of the night it happened (a tester's bar assault)
        "처음보는 30대 남자요. 어깨 부딪혔다고 갑자기 주먹으로 얼굴 때림",
        "작년에 남편이 때려서 이혼하려고요",
        "폭행 사건으로 고소당했어요",
        "집주인이 문자로 협박해요 보증금 안 준다고",
        "사채업자가 전화로 협박해요",
        "my mom is going to kill me when she sees my grades",
        "he used to hit me when we were married",
        "이 집 맛이 진짜 죽인다",
        "남편이 때리면 어떻게 해야 하나요",
        # the assault told with "I'm fine now" (legal tester set 5, tQ1)
        "The guy was drunk, punched me in the face twice. But I'm fine now, not in any danger.",
        # a blow denied (legal_set14 B3: "but he never hit me" fired)
        "he was always like this, last december when we were still dating he threw my phone at"
        " the wall once when he was drunk, but he never hit me",
        # a threat dated by the clause after it (legal_set14 S2)
        "He also yelled that he would kill me when the bouncer dragged him out. that was a"
        " month ago, I'm not worried now",
    ],
    "SEXUAL_VIOLENCE_NOW": [
        "예전에 성추행 당한 적 있어요",
        "성추행으로 고소하려고요",
        "5년 전에 성폭행 당했는데 지금이라도 고소할 수 있나요",
        "I was sexually assaulted years ago and want to know my options",
    ],
    "AT_THE_DOOR": [
        # knowing an address, no one coming
        "제가 그 사람 집 주소 알아요 소장에 쓰면 돼요?",
        # a gate or a protection order told of no one there now
        "학교 정문에서 만나기로 했어요",
        "I picked up my son at the school gate yesterday",
        "작년에 접근금지 명령 받았어요",
        # a door lock's log told as evidence (legal_set14 S3); the police took him away
        # (legal_set14 R6)
        "she said 'I didnt take anything' then she blocked me. also the 도어락 log shows the door"
        " opened 1:40pm that day",
        "오늘 오후 6시쯤 회사 앞에 와있었고 경찰이 잠정조치 위반으로 현행범 체포해 갔어요",
        "my mom is coming over tonight, i'm nervous about telling her",
        "the lawyer will be here tonight",  # someone coming, no fear and no one unwanted
        "엄마가 한시간 뒤에 집에 온대요",
        "he was shouting outside my room last year, it was scary but that's over now",
        "엄마가 제 쪽으로 걸어오고 있어요",
        "my dad is on his way home from work, he will be here in 20 min",
        "알아서 해 주세요 변호사님",
        "지난주에 주차장에서 그 사람을 봤는데 그냥 지나갔어요",
        "last year he said he was coming to my apartment that night and i was scared",
        # legal_set9 U2: a worry that debt collectors may come, said with "not yet"
        "어머니가 빚쟁이들이 집으로 찾아올까봐 무서워하세요. 아직 찾아온 적은 없고요",
        # legal_set9 V2: last month's night at her door, told with its day, and that day corrected
        "근데 지난달 10월 18일 밤에 제가 참다참다 한번 올라가서 문 두드렸더니, 그날 밤에 그 남자가"
        " 내려와서 저희 집 문을 쾅쾅 치면서 한번만 더 올라오면 가만 안둔다고 소리질렀어요. 너무"
        " 무서워서 문은 안열었어요",
        "윗집 남자가 문 두드리고 소리지른 날은 10월 18일이 아니라 10월 17일이에요",
        "택배 기사님이 문을 두드려요",
        "제가 그 사람 집에 찾아가서 그만하라고 했어요",  # the person went: no threat
        "작년에 집에 찾아와서 가만 안두겠다고 했었어요",  # over and done
        "my sister will come by tonight with her boyfriend, we're having dinner",
        "my mum will wait for me at the house tomorrow, we're going shopping",
        # legal_set6 tV1: a fridge, not a door
        "He wants to deduct 450,000 for the fridge that broke in September. I want it back now",
        "집 앞 카페에서 친구 기다리고 있어요",
        "예전에 전남친이 집 앞에 찾아온 적 있어요",
        "집주인이 현관 도어락 비밀번호를 바꿨어요",
        "the delivery guy knocked on my door",
        # the person's own urge, held back; visits that threaten nothing
        "진짜 확 올라가서 문 부숴버리고 싶은거 참고있어요",
        "집주인이 내일 집 보러 찾아온대요",
        "엄마가 반찬 가져다준다고 집에 온대요",
        "엄마가 내일 우리 집에 온대요 무서워요 잔소리할까봐",
        "밤길 조심하세요~ 요즘 어두워요",
        "이사 가서 새 주소 안다고 엄마가 선물 보냈어요",
        "my mom is coming to my place tonight and im scared she will see the mess",
    ],
    "WEAPON_THREAT_FEARED": [
        "예전에 남편이 칼로 찌른다고 협박한 적 있어서 그때 무서웠어요",
        "영화에서 칼로 쑤셔버린다고 하는 장면이 무서웠어요",
        "만약 칼로 위협하면 어떻게 해야 돼요? 무서워서요",
    ],
    "CHILD_AT_RISK": [
        "아동학대로 신고당했어요",
        "어릴 때 아버지한테 맞은 적 있어요",
        "아이 양육비를 안 줘요",
        "my son was bullied at school last year",
    ],
    "BREATHING": [
        "웃겨서 숨을 못 쉬겠어 ㅋㅋㅋ",
        "숨 막히는 회사 분위기 때문에 그만뒀어요",
        "상사가 숨도 못 쉬게 일을 시켜요",
        "예전에 천식으로 숨쉬기 힘들었던 적 있어요",
        "I couldn't breathe from laughing lol",
        "I bought a blue lipstick for my lips",
        "파란 립스틱 발라도 되나요",
    ],
    "UNCONSCIOUS": [
        "어제 경로당 친구가 심근경색으로 쓰러져서 구급차에 실려갔어요 너무 놀랐습니다",
        "my buddy collapsed at the gym yesterday, he's in hospital now",
        "가게 간판이 쓰러졌어요 손해배상 받을 수 있나요",
        "너무 피곤해서 쓰러질 것 같아요",
        "눈 밑 경련이 자꾸 나요",
        "the ceiling collapsed in my apartment",
        "작년에 기절한 적 있어요",
    ],
    "OVERDOSE": [
        "약을 먹었는데 효과가 없어요",
        "약을 다 먹었어요 처방전 다시 받아야 해요",
        "my brother died of an overdose years ago",
        "수면제 처방받았어요",
    ],
    "CHEST_PAIN": [
        "가슴이 답답한게 2주째예요",
        "가슴이 답답해요 스트레스 때문에 10분 정도요",
        "손녀가 결혼한당께 좋아서 심장터지겄어요ㅎㅎ",
        "손녀가 이걸 보고 가슴이 철렁했대요 ㅎㅎ",
        "가슴이 답답해요 스트레스 때문에",
        "그 사람 생각하면 가슴이 아파요",
        "you almost gave me a heart attack",
        "작년에 가슴 통증으로 식은땀 흘린 적 있어요",
        "요즘 회사일 때문에 가슴이 답답해요",
        "my chest feels tight when I'm stressed about work",
    ],
    "STROKE": [
        "눈꺼풀이 처져서 쌍꺼풀 수술 고민이에요",
        "아기가 침을 흘려요",
        "my grandmother had a stroke years ago",
        "할머니가 예전에 중풍으로 쓰러지신 적 있어요",
        "what a stroke of luck",
        "발음이 이상하다고 친구가 놀려요",
        "팔에 힘이 없어요 운동을 너무 해서",
    ],
    "BLEEDING": [
        # legal_set15 S6: how it was, two weeks before
        "honestly it was really scary, blood everywhere, but im fine now",
        # legal_set9 T4: that night's blood, three weeks before
        "it was on nov 6, friday night. we were at a 노래방 in 역삼동 around 11:30pm. he got mad"
        " and punched me in the face twice, i was bleeding everywhere",
        "예전에 흑변 본 적 있는데 괜찮아졌어요",
        "코피가 계속 나요",
        "피해가 많이 나요",
        "혈변 검사 결과 나왔어요",
    ],
    "ANAPHYLAXIS": [
        "몸무게가 얼마나 늘면 병원에 가야돼요? 발목이 부었어요",
        "땅콩 알레르기가 있어요",
        "벌에 쏘였는데 쏘인 부분만 부었어요",
        "예전에 새우 먹고 입술이 부은 적 있어요",
        "I have a peanut allergy",
        "I got stung by a bee and my arm is swollen",
    ],
    "HYPERGLYCAEMIA": [
        "공복혈당이 180이에요",
        "혈당이 350 나왔어요",
        "당뇨 때문에 목이 자주 말라요",
        "blood sugar was 310 after dinner",
        "what if my blood sugar goes over 400 and I get confused?",
    ],
    "HYPOGLYCAEMIA": [
        "혈당 60이에요 사탕 먹었어요",
        "예전에 저혈당으로 정신이 없었던 적 있어요",
        "what is hypoglycemia?",
        "혈당이 45 나왔었는데 주스 마시고 지금은 괜찮아요",
        "혈당 6.5 mmol이에요 머리가 멍해요",
        "혈당 60인데 요즘 회사일 때문에 정신이 없어요",  # "정신없다": busy
    ],
    "INFANT_FEVER": [
        "생후 6개월 아기가 열이 38도예요",
        "3살 아이가 열이 나요",
        "신생아 때 열난 적 있었어요",
        "2개월 된 강아지가 열이 나요",
        "my 2 year old has a fever",
        "my baby had a fever as a newborn",
    ],
    "HEART_FAILURE": [
        "심부전 있는데 저녁이면 발목이 살짝 붓고 계단 오르면 숨이 차요",
        "심부전이 있는데 운동해도 되나요?",
        "살이 3kg 쪘어요",
        "체중이 늘었어요 다리가 좀 부었어요",
        "I have heart failure, is walking ok?",
        "my ankles are swollen after the flight",
    ],
    "DEHYDRATION": [
        "설사를 좀 했어요",
        "탈수 예방하려면 뭘 마셔야 해요?",
        "어제 토했는데 지금은 괜찮아요",
        "I have diarrhea",
        "how do I avoid dehydration on a hike?",
        "I've been vomiting since last night. how do I know if I'm getting dehydrated?",
        "diarrhea and vomiting. what are the signs of being severely dehydrated?",
    ],
    "SUICIDE": [
        # legal_set6 tX5: afraid of intruders tonight, not of living
        "what do I do right now? I don't want to be here when they come",
        "no no I'm not suicidal!! I mean I'm scared they will come into the flat tonight",
        "제가 없으면 가게가 안돌아가요",
        "내가 없으면 애들 밥은 누가 해요",
        "죽을 만큼 힘들었던 시험",
        "배고파 죽겠어요",
        "웃겨 죽겠네 ㅋㅋ",
        "죽겠네 진짜 바빠서",
        "I'm dying to see the contract",
        "killing time before the hearing",
        "we're killing it at work",
        "drop dead gorgeous",
        "아버지가 자살하셔서 상속 문제로 상담하고 싶어요",
        "예전에 죽고 싶었던 적 있어요",
        "이 소송 빨리 끝내고 싶어요",
        "I drove 300 kms to get here",
    ],
    "SELF_HARM": [
        "일하다가 다쳤어요 산재 되나요",
        "I hurt myself at work, can I claim compensation?",
        "I cut myself shaving",
        "예전에 자해한 적 있어요",
    ],
    "STALKING": [
        "스토킹 처벌법이 궁금해요",
        "예전에 스토킹 당한 적 있어요",
        "강아지가 계속 따라와요",
        "전남친이 계속 연락해요",
    ],
    "IMAGE_THREAT": [
        "영수증 사진 보낸다고 했어요",
        "CCTV 영상 보내준다고 했어요",
        "작년에 영상 유포한다고 협박했었어요",
        "만약 사진 유포하겠다고 하면 어떻게 돼요?",
        "I will send you the photos of the damage",
    ],
    "SCHOOL_VIOLENCE_NOW": [
        "작년에 학교에서 맞은 적 있어요",
        "지금 당장 맞고있는건 아니구요 오늘 토요일이라",
        "학폭위에서 우리 애가 때렸다고 하는데 억울해요",
        "he was bullied at school years ago",
        "작년에 학교 끝나고 때리겠다고 한 적이 있어요",
        "아이가 교문 앞에서 기다리고 있어요 데리러 가야 해요",
    ],
    "POLICE_ASKED": [
        "돈 못 받으면 어떡해요",  # no threat: a worry about money
        "계약서가 없는데 어떡하죠",
        "사기 당했는데 경찰에 신고해야 하나요?",  # a legal question, no threat told
        "경찰서에 고소장 내야 하나요?",
        "should I report the scam to the police?",
        "만약 또 오면 112 불러도 되나요?",
        # a supposition cut at its comma (legal_set4 tK3)
        "If he gets physical like last time, do I call 112 or is that overkill?",
    ],
    "PREGNANCY_DANGER": [
        "임신 20주인데 두통이 좀 있어요",
        "눈이 침침하고 머리가 아파요 컴퓨터를 오래 해서",
        "예전에 임신했을 때 두통이 심하고 눈이 침침했었어요",
        "I'm pregnant and have a mild headache",
    ],
    "SEIZURE": [
        "어제 축구 경기했어요",
        "애가 예전에 열성경련 한 적 있어요",
        "my son watched the game",
        "애들이 축구 경기를 해요",
    ],
    "SWALLOWED_HAZARD": [
        "아이가 해열제를 먹었어요",
        "배터리가 다 됐어요",
        "my son took his antibiotics",
        "I swallowed my vitamins this morning",
    ],
    "GLUCOSE_METER": [
        "혈당기 사려고 하는데 추천해 주세요",
        "hi, my meter is new",
        "my meter reads 120",
    ],
    "INFANT_UNWELL": [
        "애가 열이 나서 피곤한지 낮잠을 오래 자요",
        "3살 아이가 축 처져 있어요",
        "아기가 잠을 잘 자요",
        "my 5 year old is floppy from tiredness? no, just lazy lol",
    ],
    "HEAD_INJURY": [
        "머리를 부딪혔는데 괜찮아졌어요",
        "작년에 넘어져서 머리를 다쳤었어요",
        "머리가 아파요 토할 것 같아요",
    ],
    "ASTHMA_ATTACK": [
        "흡입기 쓰는 법 알려주세요",
        "my inhaler is helping a lot",
        "the inhaler works fine",
    ],
    "INFANT_NOT_FEEDING": [
        "5살 아이가 밥을 안 먹어요",
        "신생아가 분유를 평소보다 조금 덜 먹어요",
        "my 2 year old won't eat vegetables",
    ],
    "REDUCED_FETAL_MOVEMENTS": [
        "태동이 언제부터 느껴지나요?",
        "예전에 임신했을 때 태동이 줄었던 적 있어요",
        "when will I feel the baby kick?",
    ],
    "PREGNANCY_BLEEDING": [
        "임신 준비 중인데 생리가 나왔어요",
        "I'm not pregnant, I have my period",
        "잇몸에서 피가 나요",
    ],
    "HEAD_INJURY_ON_THINNERS": [
        "와파린 먹는데 바나나 먹어도 돼요?",
        "할머니가 넘어지셨는데 다친 데는 없어요",
        "I'm on warfarin, can I eat spinach?",
    ],
    "DELIRIUM": [
        "요즘 일 때문에 정신이 없어요",
        "아버지가 예전에 헛소리를 하신 적 있어요",
        "my grandma is confused about the new TV remote",
    ],
    "LOW_SUGAR_SIGNS": [
        "아마릴 먹는데 술 마셔도 돼요?",
        "혈당이 6.5 mmol이에요",
        "I'm shaky because I had too much coffee",
        "아마릴 먹는데 떨리는 건 없어요? 그냥 궁금해서요",
        # 당 inside another word, and a number that is an amount (a tester's jeonse story)
        "집에 새마을금고 근저당이 1억2천 잡혀 있어요",
        "정당이 3백만원 후원금을 받았대요",
    ],
    "HIGH_SUGAR_SYMPTOMS": [
        "목이 너무 말라요",
        "혈당 150인데 목이 말라요",
        "blood sugar 130 and thirsty",
    ],
    "BLACK_STOOL": [
        "철분제 먹고 변이 까매요",
        "예전에 흑변 본 적 있는데 괜찮아졌어요",
        "혈변 검사 결과 나왔어요",
        "I take iron tablets and my poo is black",
    ],
    "DEHYDRATION_SIGNS": [
        "설사를 좀 했어요",
        "아침에 일어나면 어지러워요",
        "I had diarrhoea last week",
    ],
    "EXERTIONAL_CHEST_PAIN": [
        "계단 오르면 다리가 아파요",
        "가슴이 답답해요 스트레스 때문에",
        "I run every morning and feel great",
    ],
    "RELIEVER_OVERUSE": [
        "흡입기는 일주일에 한 번 정도 써요",
        "하루에 4번 약을 먹어요",
        "I take my pills three times a day",
    ],
    "HIGH_SUGAR_NEW": [
        "당뇨가 있는데 혈당이 320 나왔어요",
        "공복혈당이 180이에요",
        "I'm diabetic and my sugar was 310 after dinner",
    ],
    "PREGNANCY_HIGH_BP": [
        "임신 30주인데 혈압 118/76이에요",
        "혈압이 150/95 나왔어요 (임신 아님)",
        "예전에 임신했을 때 혈압이 높았었어요",
    ],
    "KIDNEY_WARNING": [
        "발목이 좀 부었어요",
        "소변 검사 결과 나왔어요",
        "my urine is clear and I drink plenty",
    ],
    "THUNDERCLAP_HEADACHE": [
        "열이 나고 발진이 있는데 눌러보니 없어져요",
        "열이 나요 두통이 안 없어져요",
        "머리가 좀 아파요",
        "예전에 인생 최악의 두통을 겪은 적 있어요",
        "목이 뻣뻣해요 베개를 바꿔서",
    ],
    "HYPERTENSIVE_CRISIS": [
        "혈압이 130/85예요 머리가 좀 아파요",
        "my BP was 145/95 and I have a headache",
        "예전에 혈압이 190까지 올라간 적 있었어요",
    ],
    "HEATSTROKE": [
        "더워 죽겠어요",
        "오늘 폭염이래요 물 많이 마셔야겠죠?",
        "it's so hot today, I'm dying out here lol",
    ],
    "VERY_HIGH_BP": [
        "혈압이 150/95예요",
        "예전에 혈압 190까지 나온 적 있어요",
        "my BP is 128/82",
    ],
    "CHRONIC_LUNG_WORSE": [
        "copd가 뭐예요?",
        "친구가 copd가 있어요",
        "what inhaler is best for COPD?",
    ],
    "THINNER_BLEEDING": [
        "소변 색이 좀 진해요",
        "와파린 먹는데 바나나 먹어도 돼요?",
        "my urine is clear",
    ],
    "THINNER_MINOR_BLEEDING": [
        "잇몸에서 피가 나요 치과 가야 하나요",
        "와파린 먹는데 양치는 어떻게 해요?",
        "I take aspirin, is flossing ok?",
    ],
}

# Intake messages (and the near-misses) that must fire no rule at all.
NO_ALERT = [
    "예전에 폭행당한 적 있어요",
    "작년에 남편이 때려서 이혼하려고요",
    "죽을 만큼 힘들었던 시험",
    "배고파 죽겠어요",
    "my grandmother had a stroke years ago",
    "가슴이 답답해요 스트레스 때문에",
    "예전에 흑변 본 적 있는데 괜찮아졌어요",
    "the movie had a murder",
    "집주인이 문자로 협박해요 보증금 안 준다고",
    "사채업자가 전화로 협박해요",
    "폭행 사건으로 고소당했어요",
    "흉기 폭행 재판 중이에요",
    "예전에 폭행당한 적 있어요 그때 일로 상담하고 싶어요",
    "친구에게 500만원을 빌려줬는데 안 갚아요",
    "보증금을 못 받았어요 집주인이 연락을 안 받아요",
    "회사에서 월급을 3개월째 못 받고 있어요",
    "이혼하고 싶어요",
    "교통사고가 났는데 보험사가 연락이 없어요",
    "음주운전으로 면허가 취소됐어요",
    "I lent my friend 5 million won and he won't pay me back",
    "my landlord is not responding to my messages",
    "안녕하세요 상담 받고 싶어요",
    "",
    "   ",
    "ㅠㅠ",
    "😭😭",
]

FIRING = [(code, text) for code, texts in FIRES.items() for text in texts]
MISSING = [(code, text) for code, texts in NEAR_MISSES.items() for text in texts]
HANGUL = re.compile(r"[가-힣]")


@pytest.fixture(scope="module")
def safety(knowledge: Knowledge) -> SafetyCheck:
    return SafetyCheck(knowledge.safety)


def codes(safety: SafetyCheck, text: str) -> list[str]:
    return [hit.code for hit in safety.check(text)]


# --- every rule is covered ---------------------------------------------------------------------


def test_every_rule_has_firing_and_near_miss_examples(knowledge: Knowledge) -> None:
    """A rule added to safety.yaml without examples here fails this test."""
    rule_codes = {rule.code for rule in knowledge.safety.rules}
    assert set(FIRES) == rule_codes, "every rule needs firing examples in FIRES (and no others)"
    assert set(NEAR_MISSES) == rule_codes, "every rule needs near-misses in NEAR_MISSES"
    for code in rule_codes:
        assert len(FIRES[code]) >= 4, code
        assert len(NEAR_MISSES[code]) >= 3, code
        assert any(HANGUL.search(t) for t in FIRES[code]), f"{code}: no Korean example"
        assert any(not HANGUL.search(t) for t in FIRES[code]), f"{code}: no English example"


@pytest.mark.parametrize(("code", "text"), FIRING, ids=[f"{c}:{t}" for c, t in FIRING])
def test_fires(safety: SafetyCheck, code: str, text: str) -> None:
    assert code in codes(safety, text)


@pytest.mark.parametrize(("code", "text"), MISSING, ids=[f"{c}:{t}" for c, t in MISSING])
def test_near_miss_does_not_fire(safety: SafetyCheck, code: str, text: str) -> None:
    assert code not in codes(safety, text)


@pytest.mark.parametrize("text", NO_ALERT)
def test_intake_messages_raise_no_alert(safety: SafetyCheck, text: str) -> None:
    assert safety.check(text) == []


# --- how people write ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "죽고싶어요",
        "죽고 싶 어요",
        "죽고  싶어요!!!",
        "죽.고.싶.어",
        "죽고싶어ㅠㅠㅠ",
        "죽고 싶어요 😭",
        "죽고싶다",
        "죽고 싶음",
        "죽고잡다",  # Jeolla dialect
        "죽고십어요",  # one-character typo
        "I  WANT   TO KILL MYSELF",
        "i wanna die",
        "I don’t want to live any more",  # curly apostrophe
        "ｉ ｗａｎｔ ｔｏ ｄｉｅ",  # full-width letters (NFKC)
        "kill my self",
    ],
)
def test_suicide_is_found_however_it_is_written(safety: SafetyCheck, text: str) -> None:
    assert codes(safety, text) == ["SUICIDE"]


def test_normalise_folds_width_case_apostrophes_and_spaces() -> None:
    assert normalise("  I’M\tＯＫ  now \n\n next") == "i'm ok now\nnext"


def test_a_guard_cancels_only_its_own_clause(safety: SafetyCheck) -> None:
    assert codes(safety, "예전에 맞은 적 있어요") == []
    assert "VIOLENCE_NOW" in codes(safety, "예전에 맞은 적 있는데 지금 또 때리고 있어요")
    assert "VIOLENCE_NOW" in codes(safety, "he used to hit me, now he hits me every night")


# --- urgency and the reply ----------------------------------------------------------------------


def test_hits_come_most_urgent_first_once_per_code(
    safety: SafetyCheck, knowledge: Knowledge
) -> None:
    order = [rule.code for rule in knowledge.safety.rules]
    for _, text in FIRING:
        found = codes(safety, text)
        assert len(found) == len(set(found)), text
        assert found == sorted(found, key=order.index), text
    mixed = codes(safety, "남편이 칼 들고 있어요 죽고 싶어요 숨을 못 쉬겠어요")
    assert mixed == ["WEAPON_THREAT", "BREATHING", "SUICIDE"]


def first_number(text: str) -> str:
    return re.search(r"(?<!\d)(112|119|1366|109|1388|1339)(?!\d)", text).group(1)


@pytest.mark.parametrize("lang", ["ko", "en"])
@pytest.mark.parametrize(("code", "text"), FIRING[::3], ids=[t for _, t in FIRING[::3]])
def test_reply_leads_with_the_first_number_and_names_them_all(
    safety: SafetyCheck, code: str, text: str, lang: str
) -> None:
    hits = safety.check(text)
    reply = safety.reply(hits, lang)
    assert first_number(reply) == hits[0].hotlines[0]
    for hit in hits:
        for number in hit.hotlines:
            assert re.search(rf"(?<!\d){number}(?!\d)", reply), (number, reply)
    assert bool(HANGUL.search(reply)) == (lang == "ko")


@pytest.mark.parametrize(
    ("text", "ko_first", "en_first"),
    [
        ("남편이 지금 칼을 들고 위협해요", "112", "112"),
        ("너무 힘들어서 죽고 싶어요", "109", "109"),
        ("I want to kill myself", "109", "109"),
        ("가슴이 너무 아프고 식은땀이 나요", "119", "119"),
    ],
)
def test_reply_numbers(safety: SafetyCheck, text: str, ko_first: str, en_first: str) -> None:
    hits = safety.check(text)
    assert first_number(safety.reply(hits, "ko")) == ko_first
    assert first_number(safety.reply(hits, "en")) == en_first


def test_danger_reply_names_112_text_and_1366(safety: SafetyCheck) -> None:
    hits = safety.check("남편이 지금 때리고 있어요")
    ko, en = safety.reply(hits, "ko"), safety.reply(hits, "en")
    assert ko.index("112") < ko.index("1366") and "문자" in ko
    assert en.index("112") < en.index("1366") and "text 112" in en


def test_two_categories_one_message_with_the_further_number(safety: SafetyCheck) -> None:
    hits = safety.check("남편이 칼 들고 있어요 죽고 싶어요")
    reply = safety.reply(hits, "ko")
    assert reply.startswith(safety.rules.replies["danger"].ko)
    assert reply.count("109") == 1 and reply.count("112") >= 1
    assert safety.reply([], "ko") == ""


def test_staff_notice_has_codes_and_placeholders_but_no_words(safety: SafetyCheck) -> None:
    hits = safety.check("너무 힘들어서 죽고 싶어요")
    for lang in ("ko", "en"):
        notice = safety.notice(hits, lang, chat=4242, when="2025-01-02 03:04")
        assert "SUICIDE" in notice and "4242" in notice and "2025-01-02 03:04" in notice
        assert "109" in notice and "힘들어서" not in notice


def test_hit_is_a_small_frozen_value() -> None:
    hit = SafetyHit("SUICIDE", "suicide", ("109", "119"))
    with pytest.raises(AttributeError):
        hit.code = "X"  # type: ignore[misc]


# --- the file ------------------------------------------------------------------------------------


def test_safety_file_validates(knowledge: Knowledge) -> None:
    rules = knowledge.safety
    assert {r.category for r in rules.rules} == {
        "danger",
        "suicide",
        "medical",
        "medical_today",
        "medical_days",
    }
    assert [r.hotlines[0] for r in rules.rules if r.category == "suicide"] == ["109", "109"]
    assert all(r.hotlines[0] == "119" for r in rules.rules if r.category.startswith("medical"))


def broken_copy(tmp_path: Path, edit) -> Path:
    for file in FILES:
        shutil.copy(KNOWLEDGE_DIR / file, tmp_path / file)
    data = yaml.safe_load((tmp_path / "safety.yaml").read_text(encoding="utf-8"))
    edit(data)
    (tmp_path / "safety.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), "utf-8")
    return tmp_path


def _rule(data: dict, code: str) -> dict:
    return next(r for r in data["rules"] if r["code"] == code)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda d: _rule(d, "SUICIDE")["when"].append(["no_such_term"]),
            "rules.SUICIDE.when: unknown term 'no_such_term'",
        ),
        (
            lambda d: _rule(d, "STALKING")["unless"].append("gossip"),
            "rules.STALKING.unless: unknown guard 'gossip'",
        ),
        (
            lambda d: _rule(d, "AT_THE_DOOR")["again"].append(["no_such_term"]),
            "rules.AT_THE_DOOR.again: unknown term 'no_such_term'",
        ),
        (
            lambda d: d["case_terms"].update(STALKING=["door_place"]),
            "case_terms.STALKING: 'door_place' must be in carry",
        ),
        (lambda d: d["rules"][0].update(category="legal"), "rules.0.category"),
        (lambda d: d["rules"][0].update(hotlines=["911"]), "rules.0.hotlines.0"),
        (
            lambda d: _rule(d, "SUICIDE").update(hotlines=["112", "109"]),
            "rules.SUICIDE.hotlines: the reply for suicide must name 112",
        ),
        (lambda d: d["terms"]["now"].update(ko=["지금("]), "terms.now.ko"),
        (lambda d: d["terms"]["now"].update(ko=["지금 당장"]), "has a space"),
        (lambda d: d["rules"].append(dict(d["rules"][0])), "code appears twice"),
        (lambda d: d["replies"].pop("medical"), "replies: missing medical"),
        (lambda d: d["rules"][0].update(when=[]), "rules.0.when"),
    ],
)
def test_broken_rule_names_file_and_field(tmp_path: Path, edit, expected: str) -> None:
    with pytest.raises(KnowledgeError) as err:
        load_knowledge(broken_copy(tmp_path, edit))
    assert str(err.value).startswith("safety.yaml: ")
    assert expected in str(err.value)
